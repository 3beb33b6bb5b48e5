internal import CNGHTTP2
#if canImport(Glibc)
import Glibc
#endif

/// HTTP/2 on one TLS connection, through libnghttp2's server session: nghttp2 parses and writes
/// every frame and the header compression, keeps flow control and stream states; this type feeds
/// it the client's bytes, hands each complete request to the handler, submits the responses, and
/// moves nghttp2's output to the socket, under the same rate and idle rules as HTTP/1.1.
/// - Thread: the connection's thread only
final class HTTP2Session {
    /// A request being received, then its response being sent.
    final class Stream {
        var method = ""
        var path = ""
        var authority: String?
        var headers: [LoopbackServer.Header] = []
        var headerBytes = 0
        var body: [UInt8] = []
        var headTooLarge = false
        var bodyTooLarge = false
        /// The response body being sent and how far.
        var outgoing: LoopbackServer.Response.Body?
        var sent = 0
    }

    private let channel: Channel
    private var session: OpaquePointer?
    private var streams: [Int32: Stream] = [:]
    /// Streams whose request is complete, in order, to be answered.
    private var ready: [Int32] = []
    /// Request body bytes held across the connection's streams: at most twice `maximumBodyBytes`
    /// (a stream that would pass it is answered 413), however many streams are open.
    private var bufferedBodyBytes = 0
    /// nghttp2's output not yet taken by the transport.
    private var output: [UInt8] = []
    private var outputStart = 0

    init(channel: Channel) {
        self.channel = channel
    }

    private var configuration: LoopbackServer.Configuration { channel.configuration }

    func run() {
        var callbacks: OpaquePointer?
        guard nghttp2_session_callbacks_new(&callbacks) == 0, let callbacks else { return }
        Self.install(callbacks)
        let created = nghttp2_session_server_new(&session, callbacks, Unmanaged.passUnretained(self).toOpaque())
        nghttp2_session_callbacks_del(callbacks)
        guard created == 0, let session else { return }
        defer {
            nghttp2_session_del(session)
            for stream in streams.values { stream.outgoing.map { LoopbackServer.Response(body: $0).discard() } }
            streams.removeAll()
        }
        guard tessera_h2_submit_settings(session, UInt32(configuration.maximumConcurrentStreams)) == 0 else { return }
        var idleSince: Double? = nil
        var scratch = [UInt8](repeating: 0, count: 32 << 10)
        while true {
            if idleSince != nil && !streams.isEmpty {
                // A request began: the client's time counts from here (before what is sent for it).
                idleSince = nil
                channel.core.setIdle(channel.id, since: nil)
                channel.meter.restart()
            }
            answerReadyStreams(session)
            guard writeWhatIsReady(session) else { return reportGone() }
            let hasOutput = outputStart < output.count || channel.transport.hasPendingOutput
            if nghttp2_session_want_read(session) == 0 && nghttp2_session_want_write(session) == 0 && !hasOutput {
                channel.transport.finish()
                return
            }
            let busy = !streams.isEmpty || hasOutput
            if busy, idleSince != nil {
                idleSince = nil
                channel.core.setIdle(channel.id, since: nil)
                channel.meter.restart()
            } else if !busy, idleSince == nil {
                let now = MonotonicTime.now()
                idleSince = now
                channel.core.setIdle(channel.id, since: now)
            }
            let deadline = idleSince.map { $0 + configuration.idleTimeout } ?? channel.meter.windowEnd
            let readiness = channel.wait(read: true, write: outputStart < output.count, deadline: deadline)
            if readiness.stopped { return }
            if readiness.readable {
                let result = scratch.withUnsafeMutableBytes { channel.transport.receive(into: $0) }
                switch result {
                case .transferred(let count):
                    channel.meter.add(count)
                    let consumed = scratch.withUnsafeBytes {
                        nghttp2_session_mem_recv(session, $0.baseAddress!.assumingMemoryBound(to: UInt8.self), count)
                    }
                    if consumed < 0 { return }
                case .wouldBlock: break
                case .closed, .failed: return reportGone()
                }
            }
            // Checked whatever woke the wait: a socket that is ready but moves nothing is no excuse.
            let now = MonotonicTime.now()
            if let idleSince, streams.isEmpty, now >= idleSince + configuration.idleTimeout {
                channel.shed(.idle)
                return
            }
            if idleSince == nil && now >= channel.meter.windowEnd && channel.meter.windowEndedTooSlow(now: now) {
                let responding = hasOutput || streams.values.contains { $0.outgoing != nil }
                channel.shed(responding ? .slowReader : .slowRequest)
                return
            }
        }
    }

    /// Counts a client that went away with a response still being sent.
    private func reportGone() {
        if !channel.core.isStopping && streams.values.contains(where: { $0.outgoing != nil }) {
            channel.core.record { $0.clientsGoneMidResponse += 1 }
        }
    }

    /// Moves nghttp2's output to the transport until nghttp2 has nothing more to send (flow control
    /// may hold it) or the socket would block; false when the session or the connection failed.
    private func writeWhatIsReady(_ session: OpaquePointer) -> Bool {
        while true {
            guard let produced = produceOutput(session), pushOutput() else { return false }
            let blocked = outputStart < output.count || channel.transport.hasPendingOutput
            if blocked || produced == 0 || nghttp2_session_want_write(session) == 0 { return true }
        }
    }

    /// Takes nghttp2's output while it has some, keeping at most about 64 KB waiting for the socket;
    /// how many bytes it took, nil when the session failed.
    private func produceOutput(_ session: OpaquePointer) -> Int? {
        var produced = 0
        while output.count - outputStart < 64 << 10 && nghttp2_session_want_write(session) != 0 {
            var data: UnsafePointer<UInt8>?
            let count = nghttp2_session_mem_send(session, &data)
            if count < 0 { return nil }
            guard count > 0, let data else { break }
            if outputStart == output.count {
                output.removeAll(keepingCapacity: true)
                outputStart = 0
            }
            output.append(contentsOf: UnsafeBufferPointer(start: data, count: count))
            produced += count
        }
        return produced
    }

    /// Moves output to the transport until it would block; false when the connection failed.
    private func pushOutput() -> Bool {
        while outputStart < output.count || channel.transport.hasPendingOutput {
            let result = outputStart < output.count
                ? output.withUnsafeBytes { channel.transport.send(UnsafeRawBufferPointer(rebasing: $0[outputStart...])) }
                : channel.transport.flush()
            switch result {
            case .transferred(let count):
                outputStart += count
                channel.meter.add(count)
                if count == 0 && outputStart < output.count { return true }
            case .wouldBlock: return true
            case .closed, .failed: return false
            }
        }
        return true
    }

    // MARK: Requests and responses

    private func answerReadyStreams(_ session: OpaquePointer) {
        guard !ready.isEmpty else { return }
        let identifiers = ready
        ready.removeAll()
        for identifier in identifiers {
            guard let stream = streams[identifier] else { continue }
            let request = LoopbackServer.Request(method: stream.method, path: stream.path,
                                                 headers: stream.headers, version: "HTTP/2", body: stream.body)
            bufferedBodyBytes -= stream.body.count
            stream.body = []
            var response: LoopbackServer.Response
            if stream.headTooLarge {
                channel.core.record { $0.headsTooLarge += 1 }
                response = .text("the request's header list is longer than \(configuration.maximumHeadBytes) bytes", status: 431)
            } else if stream.bodyTooLarge {
                response = .text("the body is longer than \(configuration.maximumBodyBytes) bytes", status: 413)
            } else {
                switch channel.core.role {
                case .handler(let handler): response = handler(request)
                case .proxy: response = .text("this proxy speaks HTTP/1.1", status: 505)
                }
            }
            channel.core.record { $0.requestsByVersion["HTTP/2", default: 0] += 1 }
            if response.script != nil {
                // Scripts are HTTP/1.1 byte streams; on HTTP/2 the stream is reset.
                nghttp2_submit_rst_stream(session, 0, identifier, TESSERA_H2_INTERNAL_ERROR)
                continue
            }
            submit(response, on: identifier, stream: stream, isHead: stream.method == "HEAD", session: session)
        }
        // The handlers' time is not the client's.
        channel.meter.restart()
    }

    private func submit(_ response: LoopbackServer.Response, on identifier: Int32, stream: Stream, isHead: Bool,
                        session: OpaquePointer) {
        let status = response.status
        let hasBody = !(100..<200).contains(status) && status != 204 && status != 304
        var fields: [(String, String)] = [(":status", String(status))]
        for header in response.headers where !LoopbackServer.isFramingHeader(header.name) {
            fields.append((header.name.lowercased(), header.value))
        }
        if hasBody { fields.append(("content-length", String(response.body.count))) }
        let sendsBody = hasBody && !isHead && response.body.count > 0
        if sendsBody {
            stream.outgoing = response.body
        } else {
            response.discard()
        }
        // nghttp2 copies the names and values while submitting.
        let storage = fields.map { (Array($0.0.utf8), Array($0.1.utf8)) }
        let total = storage.reduce(0) { $0 + $1.0.count + $1.1.count }
        let bytes = UnsafeMutablePointer<UInt8>.allocate(capacity: max(total, 1))
        defer { bytes.deallocate() }
        var offset = 0
        var entries: [nghttp2_nv] = []
        for (name, value) in storage {
            let namePointer = bytes + offset
            name.withUnsafeBufferPointer { namePointer.update(from: $0.baseAddress!, count: name.count) }
            offset += name.count
            let valuePointer = bytes + offset
            if !value.isEmpty { value.withUnsafeBufferPointer { valuePointer.update(from: $0.baseAddress!, count: value.count) } }
            offset += value.count
            entries.append(nghttp2_nv(name: namePointer, value: valuePointer, namelen: name.count, valuelen: value.count,
                                      flags: TESSERA_H2_NV_FLAG_NONE))
        }
        let submitted = tessera_h2_submit_response(session, identifier, entries, entries.count, sendsBody ? 1 : 0) {
            _, identifier, buffer, length, flags, _, userData -> Int in
            let owner = Unmanaged<HTTP2Session>.fromOpaque(userData!).takeUnretainedValue()
            return owner.readBody(stream: identifier, into: buffer!, length: length, flags: flags!)
        }
        if submitted != 0 {
            stream.outgoing.map { LoopbackServer.Response(body: $0).discard() }
            stream.outgoing = nil
            nghttp2_submit_rst_stream(session, 0, identifier, TESSERA_H2_INTERNAL_ERROR)
        }
    }

    /// nghttp2's data source: the next bytes of a stream's response body.
    private func readBody(stream identifier: Int32, into buffer: UnsafeMutablePointer<UInt8>, length: Int,
                          flags: UnsafeMutablePointer<UInt32>) -> Int {
        guard let stream = streams[identifier], let outgoing = stream.outgoing else {
            return Int(TESSERA_H2_ERR_TEMPORAL_CALLBACK_FAILURE)
        }
        let count = min(length, outgoing.count - stream.sent)
        switch outgoing {
        case .bytes(let bytes):
            bytes.withUnsafeBufferPointer { buffer.update(from: $0.baseAddress! + stream.sent, count: count) }
        case .file(let descriptor, _):
            // A file that shrank while being sent resets the stream.
            guard pread(descriptor, buffer, count, off_t(stream.sent)) == count else {
                return Int(TESSERA_H2_ERR_TEMPORAL_CALLBACK_FAILURE)
            }
        }
        stream.sent += count
        if stream.sent == outgoing.count { flags.pointee |= TESSERA_H2_DATA_FLAG_EOF }
        return count
    }

    // MARK: Callbacks

    private static func owner(_ userData: UnsafeMutableRawPointer?) -> HTTP2Session {
        Unmanaged<HTTP2Session>.fromOpaque(userData!).takeUnretainedValue()
    }

    private static func install(_ callbacks: OpaquePointer) {
        nghttp2_session_callbacks_set_on_begin_headers_callback(callbacks) { _, frame, userData in
            guard let frame, tessera_h2_frame_is_request_headers(frame) != 0 else { return 0 }
            HTTP2Session.owner(userData).streams[tessera_h2_frame_stream_id(frame)] = Stream()
            return 0
        }
        nghttp2_session_callbacks_set_on_header_callback(callbacks) { _, frame, name, nameLength, value, valueLength, _, userData in
            guard let frame, let name, let value else { return 0 }
            let session = HTTP2Session.owner(userData)
            guard let stream = session.streams[tessera_h2_frame_stream_id(frame)] else { return 0 }
            stream.headerBytes += nameLength + valueLength + 32
            if stream.headerBytes > session.configuration.maximumHeadBytes {
                stream.headTooLarge = true
                return 0
            }
            let nameText = String(decoding: UnsafeBufferPointer(start: name, count: nameLength), as: UTF8.self)
            let valueText = String(decoding: UnsafeBufferPointer(start: value, count: valueLength), as: UTF8.self)
            switch nameText {
            case ":method": stream.method = valueText
            case ":path": stream.path = valueText
            case ":authority": stream.authority = valueText
            case ":scheme", ":protocol": break
            default: stream.headers.append(LoopbackServer.Header(nameText, valueText))
            }
            return 0
        }
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks) { _, _, identifier, data, length, userData in
            let session = HTTP2Session.owner(userData)
            guard let stream = session.streams[identifier], let data else { return 0 }
            let limit = session.configuration.maximumBodyBytes
            if stream.bodyTooLarge || stream.body.count + length > limit || session.bufferedBodyBytes + length > 2 * limit {
                stream.bodyTooLarge = true
                session.bufferedBodyBytes -= stream.body.count
                stream.body = []
            } else {
                stream.body.append(contentsOf: UnsafeBufferPointer(start: data, count: length))
                session.bufferedBodyBytes += length
            }
            return 0
        }
        nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks) { _, frame, userData in
            guard let frame else { return 0 }
            let type = tessera_h2_frame_type(frame)
            guard type == TESSERA_H2_HEADERS || type == TESSERA_H2_DATA, tessera_h2_frame_ends_stream(frame) != 0 else { return 0 }
            let session = HTTP2Session.owner(userData)
            let identifier = tessera_h2_frame_stream_id(frame)
            guard let stream = session.streams[identifier] else { return 0 }
            if let authority = stream.authority, !stream.headers.contains(where: { $0.name == "host" }) {
                stream.headers.insert(LoopbackServer.Header("host", authority), at: 0)
            }
            session.ready.append(identifier)
            return 0
        }
        nghttp2_session_callbacks_set_on_stream_close_callback(callbacks) { _, identifier, _, userData in
            let session = HTTP2Session.owner(userData)
            if let stream = session.streams.removeValue(forKey: identifier) {
                session.bufferedBodyBytes -= stream.body.count
                stream.outgoing.map { LoopbackServer.Response(body: $0).discard() }
            }
            return 0
        }
    }
}
