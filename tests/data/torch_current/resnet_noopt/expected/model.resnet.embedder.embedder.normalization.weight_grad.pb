B8model.resnet.embedder.embedder.normalization.weight_gradJ@#&ì»"
<Õa½;~˜<½ƒ
¼xì†½	[M¼¤]Ÿ¼{“¼(w¼ö’=Ï¥U=FBù<èä»Ó}‘¼G2=