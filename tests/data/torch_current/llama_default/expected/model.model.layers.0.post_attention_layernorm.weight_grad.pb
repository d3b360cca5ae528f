B9model.model.layers.0.post_attention_layernorm.weight_gradJ@8χO>’ ΎάWSΌW@άΌ…K½LΩr=
q7½`¶y<<#9Ύ2=Α½R‚>αί7=σφ4ΎpΊ<TΎ