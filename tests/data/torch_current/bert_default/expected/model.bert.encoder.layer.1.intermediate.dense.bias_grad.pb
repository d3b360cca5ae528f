 B7model.bert.encoder.layer.1.intermediate.dense.bias_gradJ€ÖÍ<Ò»\Z»åA<á[;H=ù
»ÍÍF½¶¹"½IÂº¼íp‚<jØ¼˜‰»©T¼@ŒQ=‰uâ:{@<,fœ<!E<p'Î¼õ=ˆ½Y,Ë¼S/¼zñ8½9l§=«£Ò¼¾D]½´O=Nã³¼äT¼Ñ½<†#˜9