# Events fired by an extension through the 3.13 monitoring C-API.
import vtfire


class FakeCode:
    co_qualname = "compiled_region"
    co_name = "compiled_region"


def caller():
    vtfire.fire(FakeCode())


caller()
