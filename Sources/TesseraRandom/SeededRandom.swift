/// SplitMix64: a small, fast generator whose sequence is fixed by its seed, so a run that prints its
/// seed can be replayed exactly.
///
/// The sequence is part of the contract: the seeded stress tests and the image fuzzer name failing runs
/// by seed, so the constants and the update below must never change.
/// - Thread: any (a value; each copy advances on its own)
public struct SeededRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// A generator whose sequence is fixed by `seed`.
    public init(seed: UInt64) { state = seed }

    /// The next value of the sequence.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
