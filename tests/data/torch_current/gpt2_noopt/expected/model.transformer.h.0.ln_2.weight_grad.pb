B&model.transformer.h.0.ln_2.weight_gradJ@@”£9”pŠ¼ú£=F!÷<§“S¼Lk»æ¾ë<¯µR=^½²»Le'¼¨üš¼
ÈÞ¼Ê'<‡ûÜ<Q26<Í5<