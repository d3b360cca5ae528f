B$model.transformer.h.0.ln_1.bias_gradJ@›¢O<PÚ¡ºT_¼@âÚ»–‹m¼Š1½
¡<üü<þù¼•,$½ô„º¶¡´¼€Ï´¸Xa;lQY»`r¼