B6model.vit.encoder.layer.0.layernorm_before.weight_gradJ@
5v½“r¼¦Æ¼>Óæ¼»sn=.˜‹»éX²½ZÒ»
=Â§<©C~½ cÝ½È×¼¼0´ß»bäú;Î|_¼