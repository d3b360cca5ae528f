B4model.deberta.encoder.layer.1.output.dense.bias_gradJ@Re^>X™W¼k
=øB½Ö=ÿÄÛ¼„n¾ò4•=• †=–Ž½’Ý‰<~L¾ÙŠ½V‘z<h›¼Âf=