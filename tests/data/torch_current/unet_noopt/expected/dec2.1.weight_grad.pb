Bdec2.1.weight_gradJ ûß‰;­qF¼
i¼ñ¦†:û»¼ª<Ù{Vºîè;