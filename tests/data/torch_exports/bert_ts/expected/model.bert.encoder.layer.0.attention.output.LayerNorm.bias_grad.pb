B?model.bert.encoder.layer.0.attention.output.LayerNorm.bias_gradJ@tFÃ»3¦…;¤’¼‰46<Ï=Ê¼êý‰¼Z®;Û."<ä”~<%=Šƒã<7›—¼”Ù;˜–ºF+Ÿ»à
H<