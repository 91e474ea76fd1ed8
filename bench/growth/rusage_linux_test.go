package growth

// rusageThread is RUSAGE_THREAD: getrusage of the calling thread only.
const rusageThread = 1
