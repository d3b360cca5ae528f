B/model.vit.layers.1.layernorm_before.weight_gradJ@+4=-Ä<óZ+<ÂÍ»ÔW`¼tE‚:te]½;@Ñ<äÛ<¢e½Àšù9µè!½N
Æ½{ü«<¹të¼ Ä4>