B.model.vit.layers.0.layernorm_after.weight_gradJ@Fô< Àº½5½ûµ¼§ãb¼¶º=½
”3;¹™<`U&<Âæ¼Mo½ôªi½|£µ;©4¼|Ú±;þYY<