// Package sdktest checks convo's codecs against the official provider SDKs.
// It is a separate module so the SDKs never become dependencies of the
// library: they are test oracles only.
package sdktest
