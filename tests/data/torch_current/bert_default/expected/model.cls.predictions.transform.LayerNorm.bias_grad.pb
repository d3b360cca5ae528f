B3model.cls.predictions.transform.LayerNorm.bias_gradJ@*Ã½3á
¾Uo>¦7¾3Ý‚>å¦>,W¾’Ø¦=-l>â¦)>4®®½þî½½€Í$¾Yng=ÝÃ(=Ö‚Ä=