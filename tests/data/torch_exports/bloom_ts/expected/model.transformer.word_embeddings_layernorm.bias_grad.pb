B5model.transformer.word_embeddings_layernorm.bias_gradJ@pù¿=çF
<òßô<°»~<Şœt½–ĞÒ½4f•»xŒ†½jê<*bÜ»Q•y=dZò¼îª= O1½ğË½2Yà<