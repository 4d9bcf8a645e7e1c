# gc collections and module imports.
import gc


def load():
    import json
    return json.dumps([1])


load()
gc.collect()
