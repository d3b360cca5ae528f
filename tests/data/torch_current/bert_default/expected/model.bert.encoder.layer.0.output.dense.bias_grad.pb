B1model.bert.encoder.layer.0.output.dense.bias_gradJ@.s;¼4êØ»Àé¼²)²»Ï!G<a‚†< B·;@éö:œ÷~»FbĞ»İ]
<Y‡è:Ÿ* <óêÆ»`è;#a¼