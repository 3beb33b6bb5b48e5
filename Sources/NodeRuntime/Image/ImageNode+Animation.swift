import Compositor

/// Animated images: an `ImageNode` whose source is an animated GIF, APNG or animated WebP plays it
/// while it is visible, with nothing to set up.
///
/// - The node first shows the still image (the first frame) as for any source; once that is
///   decoded and the node is visible, the animation's frames are decoded on display workers, two
///   ahead of the one shown, at the pixel size the still was decoded at, and each is shown when the
///   host's frame clock reaches it. Frames follow the file's delays (10 ms or less counts as 100 ms,
///   as browsers do) and its loop count (`ImageAnimationStatus.playCount`; 0 plays for ever).
/// - Only the frame shown, the frames decoded ahead and the decoder's canvas are held, never the
///   whole animation; frames replace one another without the contents' cross-fade.
/// - A node that leaves the visible state (scrolled off, a screen pushed over it) stops: its decode
///   is cancelled, it leaves the host's frames and asks for nothing, and an app at rest with no
///   visible animation running stays idle. Back in view, it goes on from the frame it shows.
/// - A new source, crop, content mode or decoded size, or leaving the preload range, starts the
///   animation again from its first frame.
/// - Fallback: a frame that cannot be decoded (cut short, corrupt, over the limits) stops the
///   animation on the frame shown, reported once in `diagnostics` (`animationStopped`); an animation
///   whose canvas is over `decodeLimits` does not play (the still image shows).
/// - Thread: any for the properties; playing happens on the main thread and display workers.
extension ImageNode {
    /// Whether an animated source plays. Default true. Set to false, the node shows the frame it
    /// shows now (the first frame if nothing played yet) and decodes no more frames: the decoder and
    /// the frames decoded ahead are let go. Set back to true, it goes on from that frame.
    /// - Thread: any
    public var animatesImages: Bool {
        get { animationPlayer.animatesImages }
        set { animationPlayer.animatesImages = newValue }
    }

    /// What `animatesImages` starts as in image nodes made from now on: true unless set. An app that
    /// honours a reduced-motion setting, or takes screenshots that must hold still (`NodeHost.settle`
    /// waits for a screen that stops changing, which an animation with short frames never is), sets it
    /// to false before it makes its nodes; nodes made before keep their own setting.
    /// - Thread: any
    public static var animatesImagesByDefault: Bool {
        get { AnimatedImagePlayer.animatesByDefault.withLock { $0 } }
        set { AnimatedImagePlayer.animatesByDefault.withLock { $0 = newValue } }
    }

    /// Holds the animation on the frame it shows (true) or lets it go on (false, the default): a
    /// paused animation decodes nothing and asks for no frames; resumed, the frame shown finishes what
    /// was left of its delay.
    /// - Thread: any
    public var isAnimationPaused: Bool {
        get { animationPlayer.isPaused }
        set { animationPlayer.isPaused = newValue }
    }

    /// True while the node's frames advance: its source is an animation that has not finished, the
    /// node is visible, not paused, and `animatesImages` is on.
    /// - Thread: any
    public var isAnimating: Bool { animationPlayer.isAnimating }

    /// Where the animation stands: the frame shown, the plays done and to do; nil for a still image,
    /// or before the first frame of an animation is shown.
    /// - Thread: any
    public var animationStatus: ImageAnimationStatus? { animationPlayer.status }

    /// Frames the node holds for its animation now (the one shown and those decoded ahead) and the
    /// most it held at once. - Thread: any
    var animationFramesHeld: (now: Int, peak: Int) { animationPlayer.framesHeld }
}
