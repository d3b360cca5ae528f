B1model.transformer.h.1.input_layernorm.weight_gradJ@$^<ÌU½„¼úó=¥ã;›K=j¹¹¼`Ï&<ŽG<¤‰¼ÍU5¼œ
½û»Ñg3½&%H9?8)¼