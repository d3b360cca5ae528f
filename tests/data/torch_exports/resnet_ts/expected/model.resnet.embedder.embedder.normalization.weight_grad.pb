B8model.resnet.embedder.embedder.normalization.weight_gradJ@WÎ¹=YÁŠ=$@½6´=î&½iÉ>ËÀ><
ð'½ËËÐ½Õ¥™<{m=5)`½³‡ƒºWÆÏ¼f©ÿ<ç›Ë<