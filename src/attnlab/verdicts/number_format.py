"""How a number is printed, in a verdict's words and in the report's cells alike."""


def fmt(value: float) -> str:
    """A number as the report prints it: four significant digits, no exponent when sane."""
    if float(value).is_integer() and abs(value) >= 1e4:
        return f"{int(value):,}"
    if value == 0 or 1e-3 <= abs(value) < 1e6:
        text = f"{value:.4g}"
        return text if "e" not in text else f"{value:.0f}"
    return f"{value:.3g}"
