"""ember-numpy: the reference device ("numpy:0"), Ember's device SDK written in NumPy."""
