 B$model.convnext.layernorm.weight_gradJ€„c=$rÜ<à=¤z(=Šh1¾¿>ñÚ_<ÂH[=dnş¼&×*=VN‹=Ÿ'„½jˆ==ÃÆ¸=$X4>(Ô<€6¬¼˜¹M¼…}½=‹
;aíÀ:b„=b]g=ìRÆ<0˜V;Ì¢y;˜z¼=5Ï=²Å×>²‘F<Àq½ŒZ ¾