B>model.deberta.encoder.layer.0.attention.output.dense.bias_gradJ@Ív;—»Â³;(»ö9¾ôC¹Ål»š«u;Ç˜;é…;»@‡çº
æk<zÚ˜¼Òs“;Xj;6Ûº