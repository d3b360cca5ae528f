 B6model.vit.encoder.layer.0.intermediate.dense.bias_gradJ€Iò<N[¹;ÁÞ¤<Ò{º:NBV¼âøB½¾,6¼s:Ã½J<»=‰J<ä¤:º·õ<o	Lº,Å»ñÀâ<ã¤½“øG<ß­ƒ¼ä]n;ÞÃã¼þ
½z³Ÿ½»Þ¼r6Ü»ÆW	¼L&<¢;ü­h¼†tý¼øcÑ;Mor¼