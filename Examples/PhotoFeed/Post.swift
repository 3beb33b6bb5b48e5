/// One post of the feed.
/// - Thread: any (a value: list rows are made from it on background threads)
struct Post: Sendable {
    let id: Int
    let author: String
    let avatar: Photo
    /// How long ago it was posted, as shown ("5m", "3h", "2d").
    let age: String
    let photo: Photo
    /// The caption's sentences; the tag follows them.
    let caption: String
    /// A hashtag, shown at the end of the caption and opened when tapped.
    let tag: String
    let likes: Int

    /// Where the tag's link goes.
    var link: String { "https://example.com/tags/\(tag)" }

    /// `count` posts made up from `seed` (the same seed gives the same feed), showing `photos`.
    static func feed(count: Int, seed: UInt64, photos: [Photo]) -> [Post] {
        precondition(!photos.isEmpty, "a feed needs at least one photo")
        var random = SeededGenerator(seed: seed)
        let firstNames = ["Ada", "Grace", "Alan", "Edsger", "Barbara", "Donald", "Frances", "Ken", "Radia"]
        let lastNames = ["Lovelace", "Hopper", "Turing", "Dijkstra", "Liskov", "Knuth", "Allen", "Thompson", "Perlman"]
        let sentences = ["Morning light on the harbour.", "Fresh from the roaster, still warm.", "Launch day!",
                         "Found this one on a walk.", "Not a filter in sight.", "Ten minutes before the rain.",
                         "The best seat in the house.", "Trying the new lens.", "Some days are just like this."]
        let tags = ["nofilter", "coffee", "weekend", "spacex", "cats", "analog", "streetphoto", "tessera"]
        return (0..<count).map { id in
            let minutes = Int.random(in: 1...(60 * 24 * 7), using: &random)
            let age = minutes < 60 ? "\(minutes)m" : minutes < 60 * 24 ? "\(minutes / 60)h" : "\(minutes / (60 * 24))d"
            let caption = sentences.shuffled(using: &random).prefix(Int.random(in: 1...3, using: &random))
                .joined(separator: " ")
            let author = firstNames.randomElement(using: &random)! + " " + lastNames.randomElement(using: &random)!
            return Post(id: id, author: author, avatar: photos.randomElement(using: &random)!, age: age,
                        photo: photos.randomElement(using: &random)!, caption: caption,
                        tag: tags.randomElement(using: &random)!, likes: Int.random(in: 0...2_500, using: &random))
        }
    }
}

/// SplitMix64: a small generator whose numbers depend only on its seed.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
