B4model.deberta.encoder.layer.1.output.dense.bias_gradJ@„»	§°»©ğ\=;½B½Ø<D6#=% ‰½Yu<Ô
=€Îºe–=N—›»‚¹	½%IÉ<¢™—½»