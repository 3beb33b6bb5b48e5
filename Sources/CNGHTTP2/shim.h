#ifndef TESSERA_CNGHTTP2_SHIM_H
#define TESSERA_CNGHTTP2_SHIM_H

// libnghttp2's server session API for LoopbackServer's HTTP/2: nghttp2 reads and writes every frame
// and the header compression; Tessera hands it bytes and gets requests back. A frame is a C union
// and a data provider holds one; the accessors below read them, so Swift never names a union.
#include <nghttp2/nghttp2.h>
#include <stdint.h>

static inline uint8_t tessera_h2_frame_type(const nghttp2_frame *frame) { return frame->hd.type; }
static inline uint8_t tessera_h2_frame_flags(const nghttp2_frame *frame) { return frame->hd.flags; }
static inline int32_t tessera_h2_frame_stream_id(const nghttp2_frame *frame) { return frame->hd.stream_id; }
/// Whether a HEADERS frame opens a request (rather than carrying trailers).
static inline int tessera_h2_frame_is_request_headers(const nghttp2_frame *frame) {
    return frame->hd.type == NGHTTP2_HEADERS && frame->headers.cat == NGHTTP2_HCAT_REQUEST;
}
static inline int tessera_h2_frame_ends_stream(const nghttp2_frame *frame) {
    return (frame->hd.flags & NGHTTP2_FLAG_END_STREAM) != 0;
}

static const uint8_t TESSERA_H2_DATA = NGHTTP2_DATA;
static const uint8_t TESSERA_H2_HEADERS = NGHTTP2_HEADERS;
static const uint32_t TESSERA_H2_DATA_FLAG_EOF = NGHTTP2_DATA_FLAG_EOF;
static const int TESSERA_H2_ERR_DEFERRED = NGHTTP2_ERR_DEFERRED;
static const int TESSERA_H2_ERR_CALLBACK_FAILURE = NGHTTP2_ERR_CALLBACK_FAILURE;
static const int TESSERA_H2_ERR_TEMPORAL_CALLBACK_FAILURE = NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
static const int32_t TESSERA_H2_SETTINGS_MAX_CONCURRENT_STREAMS = NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS;
static const uint32_t TESSERA_H2_INTERNAL_ERROR = NGHTTP2_INTERNAL_ERROR;
static const uint32_t TESSERA_H2_REFUSED_STREAM = NGHTTP2_REFUSED_STREAM;
static const uint8_t TESSERA_H2_NV_FLAG_NONE = NGHTTP2_NV_FLAG_NONE;

/// Submits a response on `stream_id`: its header fields, and a body read through `read` when
/// `has_body` (none otherwise: the HEADERS frame ends the stream).
static inline int tessera_h2_submit_response(nghttp2_session *session, int32_t stream_id, const nghttp2_nv *fields,
                                             size_t count, int has_body, nghttp2_data_source_read_callback read) {
    if (!has_body) return nghttp2_submit_response(session, stream_id, fields, count, NULL);
    nghttp2_data_provider provider;
    provider.source.ptr = NULL;
    provider.read_callback = read;
    return nghttp2_submit_response(session, stream_id, fields, count, &provider);
}

/// Announces at most `streams` concurrent streams.
static inline int tessera_h2_submit_settings(nghttp2_session *session, uint32_t streams) {
    nghttp2_settings_entry entry;
    entry.settings_id = NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS;
    entry.value = streams;
    return nghttp2_submit_settings(session, NGHTTP2_FLAG_NONE, &entry, 1);
}

#endif
