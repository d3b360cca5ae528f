BAmodel.deberta.encoder.layer.1.attention.self.value_proj.bias_gradJ@dÝ¼¥ƒ;²ü•»¼È&;‰€¼”ÙG¼É3!<
éâ;i"½@ê»q,¼9‘£<€?¤ºü­}¼[b‚¼QR9=