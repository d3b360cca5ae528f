 Blayers.0.ln_attn.weight_gradJ€Tšd»P¼ÒpÒ»S»q»×W½ş5=`xA:Z]4¼ğ;<Ÿ«·»¿g»¢ÀÈ<J™r¼0ø;ùé¼Ùm©;ª»Nëô<ö»|
¼eIÁ»ü]=¼c¼T‚	»Âÿ<G…¼B9=<ÛP<3Q±»J×Ø»²ÎV»À³K¹