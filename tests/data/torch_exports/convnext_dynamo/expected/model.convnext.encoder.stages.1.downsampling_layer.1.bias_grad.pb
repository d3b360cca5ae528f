 B>model.convnext.encoder.stages.1.downsampling_layer.1.bias_gradJÄÓ
;º√ÎrΩHrû<œIÃ<.ÑÖΩÛ—=Ÿü<6ÿÇº—Ÿ=∞0˘º"›{∫–I„ªÑΩü»s<–z•=?DÕ;¯Áà<)úº‡±ºß∫•!;ïÔ;XéºÿˆèΩy›Óª.À±;î=ƒ·Ã<jÉÍ<eΩ¶ºáT˘ºÚqò=