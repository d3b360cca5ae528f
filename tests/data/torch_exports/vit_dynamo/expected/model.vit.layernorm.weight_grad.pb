Bmodel.vit.layernorm.weight_gradJ@(¦?¸HË½*¦;=›	>wi½¼$Ä<åxó>p½Å?B>÷#<v
°¼äâq=H<Æ:ß—¼ì¾=