 B<model.convnext.encoder.stages.1.layers.0.layernorm.bias_gradJ€ð¯’½<§ö5¼-Ø%=dÀO<^%½ìë¼†Ê´¼Õo=ä—½êd$½¹;6ðr¼BÜ4½A˜½nµ½VÌj<q+$¼ìÐ<Ý¡;F*F=
è'½ä55=œT</Ï<½N›[<¾‚<@+Ë<ÑÆ;b*£<‚Á¼„ [¼