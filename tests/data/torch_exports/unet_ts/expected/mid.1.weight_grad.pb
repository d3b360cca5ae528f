Bmid.1.weight_gradJ@%
Ó;ä²¼;FVE;­«›¹)Ý»à“hº¦·‡¹BÂI9Ú&ª:ºÒ»"DN:G­6;]md;âsçº~¿œ¹ä×—»