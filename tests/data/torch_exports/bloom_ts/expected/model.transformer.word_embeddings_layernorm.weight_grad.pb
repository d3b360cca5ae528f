B7model.transformer.word_embeddings_layernorm.weight_gradJ@‰D ¼fA<å¹½ß¾½ÜéÑ¼ÔÒ¼°Œ½öõ½è¶›»b§Ï;¶C<oô½ö
¼âõ»Dcğ<ªğD½