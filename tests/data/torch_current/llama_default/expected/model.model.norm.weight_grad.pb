Bmodel.model.norm.weight_gradJ@¶âË=*‰Û=¤Bn»Èdº
>{u=Ït=àÂ5<S´D¼ÏÊ¦=lh’=yŽß=ÄÚM>‹½FX­=èlò=