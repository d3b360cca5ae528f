B"model.transformer.ln_f.weight_gradJ@à„‚:HŸ¾:Êú>âê2=JyÂ=Ÿ“·>H°›=
ã±½[s½²5·<¯x>@Î™>h…=0Ù=^ÿ>–£
½