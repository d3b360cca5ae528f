 B7model.bert.encoder.layer.0.intermediate.dense.bias_gradJ€G¨iº¤ÚÁ: è9ˆ·A¼¹Z:{p«:õ;0ùâ¹W|¼»€WD;ê¨¼S=r;±XH»QP&¼’ÎŠ»Œº
¼Jæ”;N¡};×w»—óóºÆ«<;•­:æ»d½İ;:jF:ÉWEºùş+»ã×»%Í{»:'6¼DÓ»º·³6»