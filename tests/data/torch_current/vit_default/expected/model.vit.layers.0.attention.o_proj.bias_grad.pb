B-model.vit.layers.0.attention.o_proj.bias_gradJ@q3 =4o»ñ¼<Qoã¼–U=”N`<¦x¦=d=9¹!=Óýë¼ŠàÝ½-V½¾L•»Ÿ>Á¼à
á¼7fD½