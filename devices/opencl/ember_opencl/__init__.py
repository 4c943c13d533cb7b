"""Ember's OpenCL device: OpenCL C kernels through pyopencl, one in-order queue per stream."""
