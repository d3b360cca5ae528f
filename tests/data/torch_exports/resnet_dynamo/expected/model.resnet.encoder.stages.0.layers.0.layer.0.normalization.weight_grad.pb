BHmodel.resnet.encoder.stages.0.layers.0.layer.0.normalization.weight_gradJ@!~;¯øC< ë¾³ÆÈ>¦»r?kRŒ¾Hæ”»µË;màs>úzx¾O@
:hHÕ>å<|=¦Z±=÷Q<=ëP<