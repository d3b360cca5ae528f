B-model.vit.layers.0.attention.v_proj.bias_gradJ@±½œ½v8Ñ<šµî<ò¤.=â]˜¼™=½vT »æEW¼Â¶½†;2K/=wf½axd½íZ¦½
Æ<eâ2=