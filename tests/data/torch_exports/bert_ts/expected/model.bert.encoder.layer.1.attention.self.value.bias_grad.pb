B9model.bert.encoder.layer.1.attention.self.value.bias_gradJ@=v¼Ùò‰¼Â
t<RÖ»=×¼@ğI<]¼‚2©<›ì º¤m¼¼„»–¼H!;æ"2=ühÓ;ŠÛ]½Qº<