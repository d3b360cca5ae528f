B;model.bert.encoder.layer.0.attention.output.dense.bias_gradJ@m!º7Š¹¼;j¼¡ƒ;ûœ¼Êî»–Uý:U§;´þ½;"´$<|c<Ø±o¼
@ì: 0 8N®¸8oV;