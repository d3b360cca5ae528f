B5model.cls.predictions.transform.LayerNorm.weight_gradJ@ê¡ß9®RPΩŒ·<`ﬂ=⁄YGæB¸,ºåUΩ;86<◊\ºΩG=‰ºLp->:h?
»>LF>v+ræ