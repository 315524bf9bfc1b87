# Relax ops by rly's op names (R.nn.relu is nn.relu), an attribute list and
# a dataflow block with two outputs.
@I.ir_module
class M:
    @R.function
    def main(x: R.Tensor((2, 3), "float32"), w: R.Tensor((4, 3), "float32")):
        with R.dataflow():
            lv0 = R.nn.dense(x, w)
            lv1 = R.nn.relu(lv0)
            gv = R.sum(lv1, axis=[1])
            R.output(gv, lv1)
        return gv
