B5model.cls.predictions.transform.LayerNorm.weight_gradJ@^ s>Р'’=EU>?
к<ZG
љЁ^=p¬ЄЇ∞аGљАлЋ<}≈†;†VЁїјK%>®ЌУї5Ю÷<ђџrЉЁџЋЇ