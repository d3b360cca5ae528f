B0model.model.layers.0.input_layernorm.weight_gradJ@N–d>©ïL¾ni˜¾.³¾h¦‹¾6³ˆ=ÎoŠ½/ü¤=¾Ú¾8I¾y9~¿éwt¾‰t—?!
>žŒH?­õï=