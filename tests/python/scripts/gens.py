# Generators and coroutines: yields and resumes are exits and entries.
import asyncio


def gen():
    yield 1
    yield 2


async def sub():
    await asyncio.sleep(0.01)
    return 1


async def amain():
    await asyncio.gather(sub(), sub())


def run():
    list(gen())
    asyncio.run(amain())


run()
