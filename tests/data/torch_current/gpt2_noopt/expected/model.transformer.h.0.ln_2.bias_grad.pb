B$model.transformer.h.0.ln_2.bias_gradJ@4Jl;Àû=l”æ<xÿ'½é&ø¼P<[[ =ü‘½:MÚ¼<U]F=
=Á<v[µ¼B"=ªËb<