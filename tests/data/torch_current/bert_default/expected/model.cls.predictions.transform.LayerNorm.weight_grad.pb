B5model.cls.predictions.transform.LayerNorm.weight_gradJ@
e¤=±ú;F>2}¶=Õ<"?n¹”¾^d4>ž2ª¼†¾Ïœ›>2'‰=£ðJ½ã&:= N\¼½‰®†=