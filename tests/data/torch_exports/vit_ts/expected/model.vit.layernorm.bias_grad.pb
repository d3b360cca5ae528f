Bmodel.vit.layernorm.bias_gradJ@œ‚¾÷à=®ô
¾²Ì=º:ù¼ó”è<Dj	¾)q†¾L{ì=øıD>ví=ÒÈ¼¸®>€lá;ºÍ‰¾‹ûµ>