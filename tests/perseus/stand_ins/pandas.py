"""A stand-in for pandas: common.py imports it for
InstructionProfilingResult.to_csv only, which the client never calls."""


class DataFrame:
    @staticmethod
    def from_records(*args, **kwargs):
        raise NotImplementedError("pandas stand-in: to_csv is not used by the client")
